"""The learned confidence's weights (`confidence.py`); written by
`benchmarks/next_edit_confidence.py --write` from the tuning half, do not edit by hand.
L2 strength 1 (leave-one-repository-out); threshold set on the tuning half."""

WEIGHTS: dict[str, float] = {
    "rename": 2.1938,
    "left_once": 1.1788,
    "common": 0.4461,
    "value": -0.4072,
    "literal": 0.1894,
    "ident": -0.1610,
    "deletion": 0.1362,
    "member": -0.5874,
    "binding": 1.1880,
    "log_count": -0.7117,
    "log_len": 0.9327,
    "new_exists": -0.4281,
    "neighbours": 1.5420,
    "similar_line": 3.0227,
    "log_distance": -0.0759,
    "same_frame": 0.5803,
    "same_function": -0.3437,
    "module_level": -0.7001,
    "same_callee": -0.0825,
}
BIAS = -3.2475
THRESHOLD = 0.50
