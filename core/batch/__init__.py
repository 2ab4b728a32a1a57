"""Batch work: refine whole line layers onto imagery, on Dask (core.batch.refine).

``refine_layer`` reads a layer (pyogrio), cuts its lines into pieces between
their vertices (``plan``), extracts the pieces tile by tile on a Dask cluster
(``work``, ``runner``), joins them so that lines that met still meet
(``joints``) and writes every feature back with its result (``outcome``).
"""

__all__ = ["RefineReport", "refine_layer"]


def __getattr__(name):
    if name in __all__:
        from core.batch import refine

        return getattr(refine, name)
    raise AttributeError(f"module 'core.batch' has no attribute {name!r}")
