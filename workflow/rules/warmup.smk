# Stage: warmup. Active when config has a "warmup" section with enabled: true.


def warmup_targets():
    return []
