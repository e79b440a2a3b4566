"""The order of the diagonal variants against the published one, with the seed noise (hand-computed cases)."""
from stgnn_diag.bench.aggregation import aggregate, build_tables, collect
from stgnn_diag.bench.ordering import ordering_markdown, variant_orders
from stgnn_diag.bench.report import write_report

from .synthetic import make_result, write_results


def _table(tmp_path, horizon=12):
    col = f"mae@{horizon}"
    rs = [make_result("tas_attn_none", s, {col: v}, horizon=horizon) for s, v in enumerate((4.0, 4.2, 4.4))]
    rs += [make_result("tas_attn_mask", s, {col: 4.1}, horizon=horizon) for s in range(3)]
    rs += [make_result("tas_attn_dropout", 0, {col: 3.0}, horizon=horizon),
           make_result("tts_attn_none", 0, {col: 5.0}, horizon=horizon),  # one TTS variant: no TTS line
           make_result("historical_average", None, {col: 4.2}, kind="baseline", horizon=horizon)]
    folder = write_results(tmp_path / f"res{horizon}", *rs)
    (table,) = build_tables(aggregate(collect(folder)))
    return folder, table


def test_pairs_ordered_as_published_and_separated_by_the_noise(tmp_path):
    _, table = _table(tmp_path)
    (o,) = variant_orders(table)
    assert o.arrangement == "T&S" and o.metric == "mae@12"
    assert [(v, round(s.mean, 6), s.n) for v, s in o.ranked] == [("dropout", 3.0, 1), ("mask", 4.1, 3),
                                                                 ("none", 4.2, 3)]
    # published: (d) 3.940 < (b) 3.989 < (c) 3.997. none-mask: ours 4.2 > 4.1, published 3.989 < 3.997 (no);
    # none-dropout and mask-dropout: as published. none-mask, seed by seed: d = -0.1, 0.1, 0.3, mean 0.1,
    # standard error 0.2 / sqrt(3) = 0.115, t = 0.87 < 4.30: not separated; dropout (one seed) separates from nothing.
    assert (o.pairs, o.agree, o.separated, o.separated_agree) == (3, 2, 0, 0)


def test_a_clear_difference_is_separated(tmp_path):
    col = "mae@12"
    rs = [make_result("tts_attn_noresid", s, {col: 5.0 + 0.01 * s}) for s in range(2)]
    rs += [make_result("tts_attn_penalty", s, {col: 4.0 + 0.01 * s}) for s in range(2)]
    (table,) = build_tables(aggregate(collect(write_results(tmp_path / "r", *rs))))
    (o,) = variant_orders(table)
    assert o.arrangement == "TTS" and [v for v, _ in o.ranked] == ["penalty", "noresid"]
    assert (o.pairs, o.agree, o.separated, o.separated_agree) == (1, 1, 1, 1)


def test_markdown_in_the_report_and_no_published_order_at_horizon_36(tmp_path):
    folder, table = _table(tmp_path)
    md = ordering_markdown(table)
    assert "(d) 3.000 [1] < (c) 4.100 [3] < (b) 4.200 [3]" in md
    assert "Ordered as published: 2 of 3 pairs" in md and "0 of 3 pairs." in md and "- TTS" not in md
    assert "paired t-test on the seed-by-seed differences" in md
    assert md in write_report(folder).text
    _, t36 = _table(tmp_path, horizon=36)
    md36 = ordering_markdown(t36)
    assert "MAE@36" in md36 and "published" not in md36.lower()
    assert "reports the penalty (e) as the best variant" in md36 and "(e) penalty" not in md36  # no (e) row here
    folder = write_results(tmp_path / "r36", *[make_result(f"tts_attn_{v}", 0, {"mae@36": m}, horizon=36)
                                               for v, m in (("penalty", 5.0), ("none", 5.2))])
    (t,) = build_tables(aggregate(collect(folder)))
    assert "- TTS: (e) 5.000 [1] < (b) 5.200 [1]. (e) penalty comes first." in ordering_markdown(t)


def test_separation_is_judged_seed_by_seed(tmp_path):
    # seeds move both variants together (4.0, 4.5, 5.0) and (b) stays 0.04-0.06 above (c) on every seed.
    # Unpaired, the 0.05 gap is far inside the 0.5 seed spread; paired, d = 0.05, 0.06, 0.04 has mean 0.05 and
    # standard error 0.01 / sqrt(3) = 0.0058, t = 8.7 > 4.30: separated. The published order is (b) 3.989 <
    # (c) 3.997, so this separated pair goes against it.
    col = "mae@12"
    rs = [make_result("tas_attn_mask", s, {col: v}) for s, v in enumerate((4.0, 4.5, 5.0))]
    rs += [make_result("tas_attn_none", s, {col: v}) for s, v in enumerate((4.05, 4.56, 5.04))]
    (table,) = build_tables(aggregate(collect(write_results(tmp_path / "r", *rs))))
    (o,) = variant_orders(table)
    assert [v for v, _ in o.ranked] == ["mask", "none"]
    assert (o.pairs, o.agree, o.separated, o.separated_agree) == (1, 0, 1, 0)
    assert o.separated_pairs == [("mask", "none")] and "1 of 1 pairs ((c) < (b)), 0 of them" in ordering_markdown(table)
