"""003 Tables I–III typed again from the paper (not imported from tlop) and the postal/max-rate
formulas in numpy: the independent side of the paper-003 tests."""

import numpy as np

# 003 Tables I–III, typed again from the paper (not imported from tlop): path order on-socket,
# on-node, off-node; protocol -> (alpha, beta); memcpy path -> (alpha, beta); R_N printed as s/B
T1 = {
    "summit": {"cpu": {"short": ([3.51e-07, 9.08e-07, 1.38e-06], [2.62e-10, 1.46e-09, 3.82e-10]),
                       "eager": ([4.73e-07, 1.17e-06, 1.85e-06], [6.95e-11, 2.16e-10, 2.93e-10]),
                       "rend": ([2.46e-06, 5.81e-06, 6.56e-06], [3.31e-11, 1.46e-10, 8.51e-11])},
               "gpu": {p: ([1.68e-05, 1.80e-05, 4.96e-06], [1.86e-11, 2.09e-11, 1.69e-10])
                       for p in ("short", "eager", "rend")}},
    "lassen": {"cpu": {"eager": ([3.99e-07, 7.07e-07, 1.53e-06], [5.59e-11, 2.23e-10, 4.38e-10]),
                       "rend": ([3.62e-06, 1.07e-05, 6.90e-06], [3.71e-11, 1.42e-10, 4.63e-11])},
               "gpu": {"eager": ([7.09e-07, 1.04e-06, 2.11e-06], [5.79e-11, 2.15e-10, 4.91e-10]),
                       "rend": ([6.39e-06, 2.61e-05, 6.87e-06], [3.38e-11, 4.59e-13, 4.73e-11])}},
}
T1["lassen"]["cpu"]["short"] = T1["lassen"]["cpu"]["eager"]
T1["lassen"]["gpu"]["short"] = T1["lassen"]["gpu"]["eager"]
T2 = {"summit": {"h2d_on_socket": (1.09e-05, 2.38e-11), "d2h_on_socket": (1.09e-05, 2.36e-11),
                 "h2d_off_socket": (1.26e-05, 2.71e-11), "d2h_off_socket": (1.25e-05, 2.72e-11)},
      "lassen": {"h2d_on_socket": (1.33e-05, 1.80e-11), "d2h_on_socket": (1.35e-05, 1.75e-11),
                 "h2d_off_socket": (1.42e-05, 2.84e-11), "d2h_off_socket": (1.40e-05, 2.83e-11)}}
RN = {"summit": {"cpu": 1 / 3.0e-11, "gpu": 1 / 5.1e-11},
      "lassen": {"cpu": 1 / 2.5e-11, "gpu": 4 / 4.73e-11}}  # lassen gpu: the stated bound
#: the thresholds the profiles state: (short_max, eager_max)
THR = {"summit": (512, 8192), "lassen": (0, 8192)}
WHERE = {"on_socket": 0, "on_node": 1, "off_node": 2}
SIZES = np.array([0, 1, 8, 511, 512, 513, 4096, 8191, 8192, 8193, 65536, 1 << 20, 4 << 20], dtype=float)
MACHINES = ("summit", "lassen")


def ab(machine, path, s):
    """(alpha, beta) arrays of s-byte messages on a path such as 'cpu_off_node'."""
    dev, where = path.split("_", 1)
    short_max, eager_max = THR[machine]
    s = np.asarray(s, dtype=float)
    proto = np.where(s <= short_max, 0, np.where(s <= eager_max, 1, 2))
    rows = [T1[machine][dev][p] for p in ("short", "eager", "rend")]
    a = np.choose(proto, [r[0][WHERE[where]] for r in rows])
    b = np.choose(proto, [r[1][WHERE[where]] for r in rows])
    return a, b


def postal(machine, path, s):
    a, b = ab(machine, path, s)
    return a + b * np.asarray(s, dtype=float)


def max_rate_n(machine, path, n, s, ppn):
    a, b = ab(machine, path, s)
    rn = RN[machine][path.split("_")[0]]
    return a * n + ppn * n * np.asarray(s, dtype=float) / np.minimum(rn, ppn / b)


def memcpy(machine, path, s):
    a, b = T2[machine][path]
    return a + b * np.asarray(s, dtype=float)


