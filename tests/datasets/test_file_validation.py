"""Data files a user hands us that would give a silent wrong result are refused with one error naming the file
and the fix: a non-finite or negative adjacency, negative readings (a -999 missing marker), a gap in the
timestamps, no observed reading at all, readings too large to scale, object arrays in the npz."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from stgnn_diag.datasets import MetrLA, files


def _save(folder, data, speed=None, timestamps=None, **extra):
    np.savez(folder / files.SPEED_NPZ, speed=data["speed"] if speed is None else speed,
             timestamps=data["timestamps"] if timestamps is None else timestamps,
             sensor_ids=extra.get("sensor_ids", np.array(data["ids"])))


def _refused(folder, pattern, name):
    with pytest.raises(ValueError, match=pattern) as err:
        MetrLA(folder.parent, download=False)
    message = str(err.value)
    assert name in message and "\n" not in message
    return message


@pytest.mark.parametrize("value, what", [(np.nan, "1 NaN and 0 Inf"), (np.inf, "0 NaN and 1 Inf"),
                                         (-0.5, "negative weights")])
def test_an_adjacency_with_bad_weights_is_refused(tiny_folder, value, what):
    folder, data = tiny_folder
    adj = data["adj"].copy()
    adj[2, 3] = value
    with open(folder / files.ADJ_PKL, "wb") as f:
        pickle.dump([data["ids"], {s: k for k, s in enumerate(data["ids"])}, adj], f, protocol=2)
    _refused(folder, what, "adj_mx.pkl")


@pytest.mark.parametrize("marker", [-999.0, -1.0])
def test_negative_readings_are_refused_with_the_fix(tiny_folder, marker):
    folder, data = tiny_folder
    speed = data["speed"].copy()
    speed[speed == 0] = marker
    _save(folder, data, speed)
    n = int((data["speed"] == 0).sum())
    message = _refused(folder, f"{n} readings are negative", files.SPEED_NPZ)
    assert "replace" in message and "by 0" in message


def test_a_gap_in_the_timestamps_is_refused(tiny_folder):
    folder, data = tiny_folder
    keep = np.r_[0:100, 112:len(data["timestamps"])]  # one hour missing after step 99
    _save(folder, data, data["speed"][keep], data["timestamps"][keep])
    message = _refused(folder, "not on one regular grid of 0:05:00", files.SPEED_NPZ)
    assert "gap of 1:05:00 after 2012-03-01T08:15 (step 99)" in message
    assert "Insert the missing time steps" in message


def test_a_file_without_any_observed_reading_is_refused(tiny_folder):
    folder, data = tiny_folder
    _save(folder, data, np.full_like(data["speed"], np.nan))
    _refused(folder, "no reading is observed", files.SPEED_NPZ)
    _save(folder, data, np.zeros_like(data["speed"]))
    _refused(folder, "no reading is observed", files.SPEED_NPZ)


def test_readings_too_large_to_scale_are_refused(tiny_folder):
    folder, data = tiny_folder
    speed = data["speed"].copy()
    speed[5, 1] = 1e308
    _save(folder, data, speed)
    _refused(folder, "1 readings exceed", files.SPEED_NPZ)


def test_object_arrays_are_refused_naming_the_file(tiny_folder):
    folder, data = tiny_folder
    _save(folder, data, sensor_ids=np.array(data["ids"], dtype=object))
    message = _refused(folder, "object arrays", files.SPEED_NPZ)
    assert "allow_pickle" not in message


def test_the_published_layout_still_loads(tiny_folder):
    folder, data = tiny_folder
    d = MetrLA(folder.parent, download=False)
    assert d.speed.shape == data["speed"].shape
