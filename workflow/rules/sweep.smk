# Stage: sweep. Active when config has a "sweep" section with enabled: true.


def sweep_targets():
    return []
