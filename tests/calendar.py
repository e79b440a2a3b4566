"""Random covariates in the library's calendar encoding (what the calendar embeddings accept)."""
import torch


def calendar_u(*lead, c=8, dtype=torch.float32, generator=None):
    """``[*lead, c]``: channel 0 a time of day in [0, 1) (a 5-minute slot), channels 1..7 (when ``c >= 8``)
    a one-hot weekday, any further channel uniform in [0, 1)."""
    tod = torch.randint(0, 288, lead, generator=generator).to(dtype)[..., None] / 288
    parts = [tod]
    if c >= 8:
        parts.append(torch.nn.functional.one_hot(torch.randint(0, 7, lead, generator=generator), 7).to(dtype))
    rest = c - sum(p.size(-1) for p in parts)
    if rest > 0:
        parts.append(torch.rand(*lead, rest, generator=generator, dtype=dtype))
    return torch.cat(parts, -1)
