"""Which argument combinations the fuzz test calls.

For a function of k arguments with value lists full[i] (every value) and
pairs[i] (representatives), and a valid base call:

  * if the product of the full lists has at most FULL_PRODUCT_MAX elements,
    every combination;
  * otherwise the base call, every value of every argument with the others
    at their base (one factor at a time), and a pairwise covering set of
    the representatives: every value pair of every two arguments occurs in
    at least one call (greedy construction, deterministic).
"""

import itertools

FULL_PRODUCT_MAX = 400


def combinations(full, pairs, base):
    k = len(base)
    size = 1
    for f in full:
        size *= len(f)
    if size <= FULL_PRODUCT_MAX:
        return [list(c) for c in itertools.product(*full)]
    rows = [list(base)]
    for i in range(k):
        for v in full[i]:
            row = list(base)
            row[i] = v
            rows.append(row)
    rows.extend(pairwise(pairs))
    return _unique(rows)


def pairwise(lists):
    """Rows covering every pair of values of every two positions."""
    k = len(lists)
    if k < 2:
        return [[v] for v in lists[0]] if k == 1 else [[]]
    uncovered = set()
    for i, j in itertools.combinations(range(k), 2):
        for a in range(len(lists[i])):
            for b in range(len(lists[j])):
                uncovered.add((i, a, j, b))
    rows = []
    while uncovered:
        i, a, j, b = min(uncovered)
        row = [None] * k
        row[i], row[j] = a, b
        for p in range(k):
            if row[p] is not None:
                continue
            best, gain = 0, -1
            for v in range(len(lists[p])):
                g = sum(1 for q in range(k) if row[q] is not None and
                        ((q, row[q], p, v) if q < p else (p, v, q, row[q])) in uncovered)
                if g > gain:
                    best, gain = v, g
            row[p] = best
        for q, p in itertools.combinations(range(k), 2):
            uncovered.discard((q, row[q], p, row[p]))
        rows.append([lists[p][row[p]] for p in range(k)])
    return rows


def _unique(rows):
    seen, out = set(), []
    for r in rows:
        t = tuple(r)
        if t not in seen:
            seen.add(t)
            out.append(r)
    return out
