import math

import pytest
import torch

from stgnn_diag.sensitivity import hop_lag_profile

INF = math.inf


def test_profile_by_hand():
    # 3 nodes on a path 0 - 1 - 2 (undirected hops), node 2 unreachable from node... none; T_in = 2, T_out = 1
    hops = torch.tensor([[0, 1, INF], [1, 0, INF], [INF, INF, 0]], dtype=torch.float64)
    s = torch.zeros(1, 3, 2, 3)  # [t_out, n_out, t_in, n_in]
    s[0, 0, 1, 0] = 4.0  # v=0, u=0 (hop 0), input step 1 = lag 0
    s[0, 1, 1, 1] = 2.0  # hop 0, lag 0
    s[0, 0, 0, 1] = 1.0  # v=0, u=1 (hop 1), step 0 = lag 1
    s[0, 2, 0, 0] = 3.0  # v=2, u=0: unreachable pair, lag 1
    p = hop_lag_profile(s, hops)
    assert p.hops == [0.0, 1.0, INF]
    assert p.pairs.tolist() == [3, 2, 4]
    torch.testing.assert_close(p.mass, torch.tensor([[6.0, 0.0], [0.0, 1.0], [0.0, 3.0]], dtype=torch.float64))
    torch.testing.assert_close(p.mean[0], torch.tensor([2.0, 0.0], dtype=torch.float64))
    torch.testing.assert_close(p.max[0], torch.tensor([4.0, 0.0], dtype=torch.float64))
    assert p.unreachable_pairs == 4 and p.unreachable_share == pytest.approx(0.3)
    assert float(p.share.sum()) == pytest.approx(1.0)
    torch.testing.assert_close(p.hop_share, torch.tensor([0.6, 0.1, 0.3], dtype=torch.float64))
    torch.testing.assert_close(p.lag_share, torch.tensor([0.6, 0.4], dtype=torch.float64))
    assert p.hop_ratio(1) == pytest.approx(1.0 / 0.25)
    rows = p.to_rows()
    assert len(rows) == 3 * 2 and rows[0]["hop"] == 0.0
    d = p.to_dict()
    assert d["hops"][-1] == "inf"


def test_selected_output_nodes_and_no_unreachable_row():
    hops = torch.tensor([[0, 1], [1, 0]], dtype=torch.float64)
    s = torch.ones(2, 1, 3, 2)  # output node = graph node 1
    p = hop_lag_profile(s, hops, out_nodes=[1])
    assert p.hops == [0.0, 1.0] and p.unreachable_pairs == 0 and p.unreachable_share == 0.0
    assert p.pairs.tolist() == [1, 1]
    torch.testing.assert_close(p.mean, torch.ones(2, 3, dtype=torch.float64))


def test_bad_shapes():
    with pytest.raises(ValueError, match="block norms"):
        hop_lag_profile(torch.ones(2, 2, 1, 2, 2, 1), torch.zeros(2, 2))
    with pytest.raises(ValueError, match="one graph node"):
        hop_lag_profile(torch.ones(1, 2, 1, 2), torch.zeros(2, 2), out_nodes=[0])
