"""The learned confidence's weights (`confidence.py`); written by
`benchmarks/next_edit_confidence.py --write` from the tuning half, do not edit by hand.
L2 strength 1 (leave-one-repository-out); threshold set on the tuning half."""

WEIGHTS: dict[str, float] = {
    "left_once": 1.1823,
    "common": 0.2138,
    "value": -0.4739,
    "literal": 0.0707,
    "ident": -0.2437,
    "deletion": 0.1662,
    "member": -0.6478,
    "binding": -0.4729,
    "log_count": -0.7410,
    "log_len": 0.8050,
    "new_exists": -0.5151,
    "neighbours": 1.8625,
    "similar_line": 3.2355,
    "log_distance": -0.1239,
    "same_frame": 0.7180,
    "same_function": -0.1462,
    "module_level": -0.7983,
    "same_callee": -0.1277,
}
BIAS = -3.0726
THRESHOLD = 0.45
