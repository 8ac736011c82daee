# Stage: sensitivity. Active when config has a "sensitivity" section with enabled: true.


def sensitivity_targets():
    return []
