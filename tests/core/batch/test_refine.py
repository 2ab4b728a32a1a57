"""core.batch.refine_layer end to end on a small scene of two crossing roads (Dask on threads)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pyogrio.raw
import pytest

from core.batch import refine_layer
from core.batch.refine import resume_dir_for
from core.batch.runner import Interrupted, dask_client
from core.batch.wkb import decode_lines
from tests.core.batch.scene import CRS, ROAD_X_PX, ROAD_Y_PX, map_to_px, write_lines, write_scene

THREADS = functools.partial(dask_client, workers=2, threads=True)
#: Displaced by (+4, +4) px: the horizontal line 4 px below its road, the vertical one 4 px right of it.
HORIZONTAL = [(20.0, 104.0), (90.0, 104.0), (154.0, 104.0)]
VERTICAL = [(154.0, 104.0), (154.0, 230.0)]
OFF_IMAGE = [(1000.0, 1000.0), (1100.0, 1000.0)]
PROPERTIES = {"name": np.array(["main", "side", "far"], dtype=object), "lanes": np.array([2, 1, 3], np.int32),
              "width_m": np.array([7.5, 3.25, 9.0])}


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scene")
    image = write_scene(folder / "scene.tif")
    lines = write_lines(folder / "lines.gpkg", [HORIZONTAL, VERTICAL, OFF_IMAGE], PROPERTIES)
    return folder, image, lines


def _read(path):
    meta, _, geometry, fields = pyogrio.raw.read(str(path))
    return meta, [decode_lines(g) for g in geometry], dict(zip(meta["fields"], fields))


@pytest.fixture(scope="module")
def refined(scene):
    folder, image, lines = scene
    out = folder / "refined.gpkg"
    report = refine_layer(lines, [image], out, client_factory=THREADS, tile_px=64)
    return report, *_read(out)


def test_every_feature_comes_back_with_its_properties_and_a_status(refined):
    report, meta, _, fields = refined
    assert report.features == 3 and report.statuses == {"refined": 2, "off_image": 1}
    for name, values in PROPERTIES.items():
        assert fields[name].tolist() == values.tolist()
    assert fields["status"].tolist() == ["refined", "refined", "off_image"]
    assert meta["crs"] == CRS


def test_the_lines_move_onto_their_roads_and_still_meet(refined):
    _, _, parts, fields = refined
    horizontal, vertical = map_to_px(parts[0][0]), map_to_px(parts[1][0])
    assert np.array_equal(horizontal[-1], vertical[0])  # the shared vertex is one node
    assert np.allclose(horizontal[-1], (ROAD_X_PX, ROAD_Y_PX), atol=1.0)
    assert np.abs(horizontal[:, 1] - ROAD_Y_PX).max() < 1.0
    assert np.abs(vertical[:, 0] - ROAD_X_PX).max() < 1.0
    assert fields["dmean_px"][:2] == pytest.approx([4.0, 4.0], abs=0.7)
    assert fields["dmean_m"][:2] == pytest.approx(fields["dmean_px"][:2] * 0.5, rel=2e-3)
    assert np.all(fields["confidence"][:2] > 0.5)


def test_a_line_off_the_image_comes_back_unchanged(scene, refined):
    _, _, parts, fields = refined
    _, original, _ = _read(scene[2])
    assert np.array_equal(parts[2][0], original[2][0])
    assert fields["status"][2] == "off_image" and fields["dmax_px"][2] == 0.0 and np.isnan(fields["confidence"][2])


def test_geojson_output_is_wgs84(scene, tmp_path):
    _, image, lines = scene
    out = tmp_path / "refined.geojson"
    refine_layer(lines, [image], out, client_factory=THREADS)
    meta, parts, _ = _read(out)
    assert meta["crs"] in ("EPSG:4326", "OGC:CRS84")
    assert -76 < parts[0][0][0, 0] < -74 and 40 < parts[0][0][0, 1] < 41  # UTM 18N, 4500 km north


def test_gpkg_shp_and_fgb_are_written_in_the_images_crs_whatever_the_lines_crs(scene, refined, tmp_path):
    # DESIGN.md's contract for -o: .gpkg, .shp, .fgb in the raster's CRS (they were in the lines' CRS)
    import shapely

    from core.batch.frames import transform_xy

    _, image, _ = scene
    lines = write_lines(tmp_path / "lonlat.geojson", [HORIZONTAL, VERTICAL, OFF_IMAGE], PROPERTIES, crs="EPSG:4326",
                        driver="GeoJSON")
    _, _, expected, _ = refined  # the same lines given in the image's CRS
    for suffix in (".gpkg", ".shp", ".fgb"):
        out = tmp_path / f"refined{suffix}"
        report = refine_layer(lines, [image], out, client_factory=THREADS, tile_px=64)
        meta, parts, fields = _read(out)
        assert report.statuses == {"refined": 2, "off_image": 1} and fields["status"][2] == "off_image"
        assert meta["crs"] == CRS, suffix
        for k in range(2):  # refined: where the lines in the image's CRS went
            assert np.abs(map_to_px(parts[k][0]) - map_to_px(expected[k][0])).max() < 0.05, (suffix, k)
        # unchanged but moved into the image's CRS, to within what the trip through longitudes costs
        assert np.abs(parts[2][0] - transform_xy(expected[2][0], CRS, CRS)).max() < 1e-3
    # a geometry of another type and a height come along too
    z_line = shapely.to_wkb(shapely.LineString([(-75.0, 40.6, 12.5), (-74.99, 40.61, 13.0)]))
    point = shapely.to_wkb(shapely.Point(-75.0, 40.6))
    others = tmp_path / "others.gpkg"
    pyogrio.raw.write(str(others), np.array([z_line, point], dtype=object), [np.array(["z", "p"], object)],
                      ["name"], crs="EPSG:4326", geometry_type="Unknown")
    out = tmp_path / "others-refined.gpkg"
    report = refine_layer(others, [image], out, client_factory=THREADS, tile_px=64)
    meta, geometry, fields = pyogrio.raw.read(str(out))[0], *pyogrio.raw.read(str(out))[2:]
    moved = shapely.from_wkb(geometry)
    assert meta["crs"] == CRS and report.statuses == {"off_image": 1, "not_a_line": 1}
    assert shapely.get_coordinates(moved[0], include_z=True)[:, 2].tolist() == [12.5, 13.0]
    assert np.allclose(shapely.get_coordinates(moved[1]), transform_xy([(-75.0, 40.6)], "EPSG:4326", CRS))
    # a Shapefile holds lines only: refused before the work, not after it by GDAL
    with pytest.raises(ValueError, match=r"Shapefile holds lines only.*\(1 Point\).*\.gpkg"):
        refine_layer(others, [image], tmp_path / "others-refined.shp", client_factory=THREADS, tile_px=64)
    assert not list(tmp_path.glob("others-refined*.shp*")) and not list(tmp_path.glob(".others-refined*"))


def test_a_local_cluster_address_gives_the_same_result(scene, refined, tmp_path):
    import os

    _, image, lines = scene
    out = tmp_path / "remote.gpkg"
    environment = dict(os.environ)
    with dask_client(workers=1) as local:  # a local cluster of one worker process, reached by its address
        refine_layer(lines, [image], out, client_factory=functools.partial(dask_client, local.scheduler.address),
                     tile_px=64)
    # dask's nanny had left its workers' variables in this process (OMP_NUM_THREADS=1, PYTHONHASHSEED, ...)
    assert {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"} == \
        {k: v for k, v in environment.items() if k != "PYTEST_CURRENT_TEST"}
    _, parts, fields = _read(out)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(parts, refined[2]))
    assert fields["status"].tolist() == refined[3]["status"].tolist()


def test_an_interrupted_run_resumes_where_it_stopped(scene, refined, tmp_path):
    _, image, lines = scene
    out = tmp_path / "resumed.gpkg"
    calls = []

    def stop_after_the_first_task(done, total):
        calls.append(done)
        if done > 0:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stopped:
        refine_layer(lines, [image], out, client_factory=THREADS, progress=stop_after_the_first_task, tile_px=64)
    assert 1 <= stopped.value.done < stopped.value.total
    assert not out.exists() and len(list(resume_dir_for(out).iterdir())) == stopped.value.done
    report = refine_layer(lines, [image], out, client_factory=THREADS, tile_px=64)
    assert 0 < report.pieces_resumed < report.pieces
    assert not resume_dir_for(out).exists()
    _, parts, _ = _read(out)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(parts, refined[2]))


def test_changed_settings_are_not_taken_from_an_earlier_run():
    from core.batch.runner import task_key

    task = {"source": "a.tif", "settings": {"nodes": 8}, "pieces": [[0, 1.0, 2.0, 3.0, 4.0]]}
    assert task_key(task) != task_key({**task, "settings": {"nodes": 9}})
    assert task_key(task) == task_key(dict(task))


def test_a_resume_folder_that_cannot_be_written_does_not_stop_the_run(scene, refined, tmp_path, monkeypatch):
    import core.io.geojson

    _, image, lines = scene
    out = tmp_path / "unkept.gpkg"

    def full_disk(path, text):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(core.io.geojson, "atomic_write_text", full_disk)  # what the resume files are written with
    report = refine_layer(lines, [image], out, client_factory=THREADS, tile_px=64)
    assert report.pieces_resumed == 0 and out.exists()
    _, parts, _ = _read(out)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(parts, refined[2]))


def test_the_local_clusters_processes_start_with_ctrl_c_left_to_the_command():
    # a terminal's Ctrl+C reaches the whole process group: the workers must not each print a traceback
    import signal
    import threading

    from core.batch.runner import _workers_leave_ctrl_c_to_us

    before = signal.getsignal(signal.SIGINT)
    with _workers_leave_ctrl_c_to_us():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # what the spawned workers inherit
    assert signal.getsignal(signal.SIGINT) is before
    seen = []

    def elsewhere():
        with _workers_leave_ctrl_c_to_us():  # signals can only be set from the main thread
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert seen == [before]


def test_the_input_layer_is_never_the_output(scene, tmp_path):
    folder, image, lines = scene
    copy = tmp_path / "lines.gpkg"
    copy.write_bytes(open(lines, "rb").read())
    before = copy.read_bytes()
    link = tmp_path / "link.gpkg"
    link.symlink_to(copy)
    for output in (copy, link):  # (it was replaced by the refined lines, the originals lost)
        with pytest.raises(ValueError, match="is the input layer, which the refined lines would replace"):
            refine_layer(copy, [image], output, client_factory=THREADS, tile_px=64)
    assert copy.read_bytes() == before


def _unreadable(task):
    from rasterio._err import CPLE_AppDefinedError

    from core.io.raster import RasterError

    try:
        raise CPLE_AppDefinedError(1, 1, "IReadBlock failed")  # (tblib cannot pickle this one)
    except CPLE_AppDefinedError as err:
        raise RasterError(f"cannot read {task['path']} (corrupt or truncated file?)") from err


def test_a_tiles_pieces_are_extracted_without_the_gates_turn_paths(scene, monkeypatch):
    # a piece is a straight stretch between two vertices of its line: its ends lie at crossings and stop lines
    # often, whose stripes turn the image's direction there across a road that runs straight on
    import core.extraction
    from core.batch.work import refine_tile
    from core.extraction import ExtractionSettings
    from core.extraction.options import turn_paths

    seen = []
    extract = core.extraction.extract
    monkeypatch.setattr(core.extraction, "extract", lambda *a, **k: (seen.append(turn_paths()), extract(*a, **k))[1])
    _, image, _ = scene
    rows = [[0, 20.0, ROAD_Y_PX, 120.0, ROAD_Y_PX], [1, ROAD_X_PX, 120.0, ROAD_X_PX, 220.0]]
    out = refine_tile({"source": image, "settings": dataclasses.asdict(ExtractionSettings()), "pieces": rows})
    assert [piece["status"] for piece in out] == ["refined", "refined"] and seen == [False, False]
    assert turn_paths()


def test_a_workers_error_reaches_the_client_as_its_own_class():
    # distributed pickles a worker's error with its chain; a cause that does not pickle made it a bare Exception,
    # which the command line's handlers missed (a traceback instead of one line)
    from distributed.core import clean_exception, error_message

    from core.batch.runner import _unchained
    from core.io.raster import RasterError

    with pytest.raises(RasterError) as caught:
        _unchained(_unreadable, {"path": "t.tif"})
    sent = error_message(caught.value)["exception"]
    kind, value, _ = clean_exception(getattr(sent, "data", sent))
    assert kind is RasterError and "cannot read t.tif" in str(value)


def test_lines_ending_on_the_images_border_are_refined_whatever_the_crs(scene, tmp_path):
    # lines clipped at the tile's edge end on it; through EPSG:4326 they come back 1e-9 px either side of it, and
    # were then off the image or partial by chance
    folder, image, _ = scene
    ends = [[(20.0, 103.0), (240.0, 103.0)], [(153.0, 30.0), (153.0, 240.0)], [(0.0, 97.0), (120.0, 97.0)]]
    for crs in ("EPSG:32618", "EPSG:4326"):
        lines = write_lines(tmp_path / f"border-{crs[5:]}.gpkg", ends, {"name": np.array(["a", "b", "c"], object)},
                            crs=crs)
        out = tmp_path / f"refined-{crs[5:]}.gpkg"
        report = refine_layer(lines, [image], out, client_factory=THREADS, tile_px=64)
        assert report.statuses == {"refined": 3}, crs


def test_empty_and_one_position_lines_are_no_lines_wherever_they_are_read(scene, tmp_path):
    # an empty LineString (RFC 7946 allows it), an empty part, a LineString of one position (which GEOS refuses):
    # refine and --pairs stopped with tracebacks, File > Import refused the whole file
    import json
    import struct

    import shapely

    from core.batch.frames import transform_xy
    from core.io.raster import open_raster
    from core.vector import read_line_geometry, read_lines
    from tests.core.batch.scene import px_to_map

    _, image, _ = scene
    lonlat = lambda line: transform_xy(px_to_map(np.array(line, float)), CRS, "EPSG:4326")  # noqa: E731
    good, other = lonlat(HORIZONTAL), lonlat(VERTICAL)
    one = struct.pack("<BII2d", 1, 2, 1, *good[0])  # ISO WKB LineString of one position
    positions = ", ".join(f"{x} {y}" for x, y in other.tolist())
    geometry = [shapely.to_wkb(shapely.LineString(good)), shapely.to_wkb(shapely.from_wkt("LINESTRING EMPTY")),
                one, shapely.to_wkb(shapely.from_wkt(f"MULTILINESTRING (({positions}), EMPTY)")), None]
    lines = tmp_path / "odd.gpkg"
    pyogrio.raw.write(str(lines), np.array(geometry, dtype=object), [np.array(list("abcde"), object)], ["name"],
                      crs="EPSG:4326", geometry_type="Unknown")
    out = tmp_path / "odd-refined.gpkg"
    report = refine_layer(lines, [image], out, client_factory=THREADS, tile_px=64)
    _, _, written, fields = pyogrio.raw.read(str(out))
    assert fields[0].tolist() == list("abcde")
    assert report.statuses == {"refined": 2, "not_a_line": 3}
    assert written[2] is None  # one position has no place in the image's CRS; its attributes stay
    with open_raster(image) as raster:
        assert [f.name for f in read_lines(lines, raster)] == ["a", "d"]
        assert len(read_line_geometry(lines, raster)) == 2
        collection = {"type": "FeatureCollection", "features": [
            {"type": "Feature", "properties": {"name": name}, "geometry": {"type": kind, "coordinates": coords}}
            for name, kind, coords in [("a", "LineString", good.tolist()), ("b", "LineString", []),
                                       ("c", "LineString", good[:1].tolist()), ("d", "MultiLineString", []),
                                       ("e", "MultiLineString", [other.tolist(), []])]]}
        path = tmp_path / "odd.geojson"
        path.write_text(json.dumps(collection))
        assert [f.name for f in read_lines(path, raster)] == ["a", "e"]


def test_lines_far_off_the_image_are_not_cut_and_the_lines_on_it_refine_as_before(scene, tmp_path, monkeypatch):
    # refine planned every 100 px of a line far off the image (4.8 s for 10^7 px); now a stretch beyond the
    # imagery is one piece, off the image as before, and a line crossing it is cut near it as it was
    import core.batch.refine as refine

    _, image, _ = scene
    far = [(-2e7, -5e6), (-1e7, -5e6)]
    crossing = [(60.0, 20.0), (60.0, 2e4)]
    lines = write_lines(tmp_path / "far.gpkg", [HORIZONTAL, VERTICAL, far, crossing],
                        {"name": np.array(["main", "side", "far", "cross"], object)})
    plans, plan_pieces = [], refine.plan_pieces
    monkeypatch.setattr(refine, "plan_pieces", lambda *args: plans.append(plan_pieces(*args)) or plans[-1])
    report = refine_layer(lines, [image], tmp_path / "far-refined.gpkg", client_factory=THREADS, tile_px=64)
    assert len(plans[-1].pieces) < 60  # (100,204 before)
    assert report.statuses == {"refined": 2, "off_image": 1, "partial": 1}
    _, parts, fields = _read(tmp_path / "far-refined.gpkg")
    assert fields["status"].tolist() == ["refined", "refined", "off_image", "partial"]
    _, original, _ = _read(lines)
    assert np.array_equal(parts[2][0], original[2][0])
    monkeypatch.setattr(refine, "coverage_px", lambda sources, reference: None)  # cut everywhere, as before
    refine_layer(lines, [image], tmp_path / "cut-refined.gpkg", client_factory=THREADS, tile_px=64)
    _, cut, cut_fields = _read(tmp_path / "cut-refined.gpkg")
    assert len(plans[-1].pieces) > 200
    assert all(np.array_equal(parts[k][0], cut[k][0]) for k in range(3))
    on_image = lambda xy: xy[map_to_px(xy)[:, 1] < 400]  # noqa: E731  (the crossing line's vertices near it)
    assert np.array_equal(on_image(parts[3][0]), on_image(cut[3][0]))
    assert np.array_equal(parts[3][0][-1], cut[3][0][-1])
    assert fields["dmax_px"][3] == pytest.approx(cut_fields["dmax_px"][3])
