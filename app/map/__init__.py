"""The map: the tiled raster viewer, its tile loader, the tool's overlays, and the wiring of the
extraction tool to its runner (extractions off the GUI thread).
"""
