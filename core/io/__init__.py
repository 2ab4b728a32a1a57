"""The I/O boundaries: rasters read by windows (``raster``, ``readers``) and GeoJSON lines (``geojson``).

Pixel coordinates become map coordinates and longitude/latitude only here.
"""
