def counters_targets():
    return []
