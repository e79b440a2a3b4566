"""Time to accuracy: curves read from the units' run logs, one plot in the report."""
from stgnn_diag.bench.report import write_report
from stgnn_diag.bench.time_to_accuracy import collect_curves, read_curve

from .synthetic import make_result, write_results

PNG = b"\x89PNG\r\n\x1a\n"
HEADER = "epoch,lr,step,train_mae,train_seconds,val_mae,val_mae_last\n"


def _with_log(folder, result, rows):
    result = {**result, "run_dir": "run", "environment": {"threads": 1}}
    write_results(folder, result)
    log = folder / result["unit_id"] / "run" / "metrics.csv"
    log.parent.mkdir(parents=True)
    log.write_text(HEADER + "".join(rows))
    return result


def test_curves_come_from_the_run_logs_in_time_order_and_the_report_plots_them(tmp_path):
    res = tmp_path / "res"
    # Lightning writes step rows (no validation values) between the validation rows; a resumed run's merge
    # may list epochs out of order
    _with_log(res, make_result("tas_attn_none", 0, {}), [
        "0,0.008,49,,,,\n", "1,,549,,1090.5,3.9,4.59\n", "0,,274,,559.0,4.2,5.09\n"])
    _with_log(res, make_result("tsl:STIDModel", 0, {}), ["0,,274,,60.0,4.0,4.8\n"])
    write_results(res, make_result("historical_average", None, {}, kind="baseline"))
    assert read_curve(res / make_result("tas_attn_none", 0, {})["unit_id"] / "run" / "metrics.csv") == [
        (559.0, 5.09), (1090.5, 4.59)]
    curves = {c.model: c for c in collect_curves(res)}
    assert set(curves) == {"tas_attn_none", "tsl:STIDModel"}  # the baseline trains nothing
    assert curves["tas_attn_none"].seconds == [559.0, 1090.5] and curves["tas_attn_none"].val_mae_last == [5.09, 4.59]
    assert curves["tas_attn_none"].seed == 0 and curves["tas_attn_none"].threads == 1
    # the end point: the whole training time and the test MAE at the horizon's last step of the result
    assert (curves["tas_attn_none"].end_seconds, curves["tas_attn_none"].test_mae_last) == (10.0, 5.0)
    plot = res / "plots" / "time_to_accuracy.png"
    assert plot in write_report(res).plots and plot.read_bytes()[:8] == PNG


def test_a_unit_stopped_before_its_first_validation_keeps_its_end_point(tmp_path):
    res = tmp_path / "res"
    _with_log(res, make_result("tsl:GraphWaveNetModel", 0, {"mae@12": 5.46}), ["0,0.008,49,,,,\n"])
    (curve,) = collect_curves(res)
    assert curve.seconds == [] and (curve.end_seconds, curve.test_mae_last) == (10.0, 5.46)
    assert any(p.name == "time_to_accuracy.png" for p in write_report(res).plots)


def test_no_curve_no_plot(tmp_path):
    res = write_results(tmp_path / "res", make_result("tas_attn_none", 0, {}))  # a result without a run log
    assert collect_curves(res) == []
    assert not any(p.name == "time_to_accuracy.png" for p in write_report(res).plots)
