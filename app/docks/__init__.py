"""The panels beside the map: extraction settings, features, display options."""
