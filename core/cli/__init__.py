"""The headless commands of ``linesnap``: ``extract`` (one extraction as GeoJSON) and ``knapsack``."""
