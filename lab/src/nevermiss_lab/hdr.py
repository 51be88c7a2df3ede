"""Reading the HdrHistogram interval logs nevermiss writes (`bench --hdr-dir`, `serve
--update-log`): V2 interval-log format, one tagged interval per run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

from .errors import LabError

#: Highest value the lab's histograms hold (ticks or ns); 3 significant digits as nevermiss writes.
HIGHEST = 10**13


@dataclass
class Log:
    """One interval log: the histogram of each interval (tag → histogram) and all together."""

    path: Path
    intervals: list[tuple[str, HdrHistogram]]
    total: HdrHistogram

    def percentile(self, p: float) -> int:
        """The value at percentile `p` (0..100) of all intervals together."""
        return int(self.total.get_value_at_percentile(p))


def read_log(path: Path) -> Log:
    """Reads an interval log; a `LabError` naming the file if it is missing or unreadable."""
    if not path.is_file():
        raise LabError(f"{path}: no such HdrHistogram log")
    total = HdrHistogram(1, HIGHEST, 3)
    intervals: list[tuple[str, HdrHistogram]] = []
    try:
        reader = HistogramLogReader(str(path), HdrHistogram(1, HIGHEST, 3))
        while True:
            h = reader.get_next_interval_histogram()
            if h is None:
                break
            intervals.append((str(h.get_tag() or ""), h))
            total.add(h)
    except Exception as e:  # the hdrh package raises bare exceptions on corrupt input
        raise LabError(f"{path}: not a readable HdrHistogram interval log ({e})") from e
    if not intervals:
        raise LabError(f"{path}: no histograms in this log")
    return Log(path, intervals, total)


def capped_mean(h: HdrHistogram, factor: float) -> tuple[float, int]:
    """The mean of the values at most `factor` × the median, and how many values were above
    (a robust average cost per packet: on a shared machine a packet during which the process
    was descheduled takes milliseconds, and a few of those swamp a plain mean). Values are the
    buckets' median-equivalents, as HdrHistogram's own mean uses."""
    if h.get_total_count() == 0:
        raise LabError("capped mean of an empty histogram")
    cap = factor * h.get_value_at_percentile(50.0)
    total = 0.0
    n = dropped = 0
    for it in h.get_recorded_iterator():
        v, c = it.value_iterated_to, it.count_at_value_iterated_to
        if v > cap:
            dropped += c
            continue
        total += h._hdr_median_equiv_value(v) * c
        n += c
    return total / n, dropped


def percentile_distribution(h: HdrHistogram, ticks_per_half: int = 5) -> list[tuple[float, int]]:
    """(percentile, value) pairs as HdrHistogram's percentile distribution prints them: steps
    that halve the distance to 100 % (`ticks_per_half` per halving), ending at the maximum."""
    out: list[tuple[float, int]] = []
    p = 0.0
    total = h.get_total_count()
    if total == 0:
        return out
    # Stop once one step is below one sample's share.
    floor = 100.0 / total
    while 100.0 - p > floor / 2:
        out.append((p, int(h.get_value_at_percentile(p))))
        remaining = 100.0 - p
        p += remaining / 2 / ticks_per_half
    out.append((100.0, int(h.get_max_value())))
    return out
