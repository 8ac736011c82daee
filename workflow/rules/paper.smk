# Stage: paper. Active when config has a "paper" section with enabled: true.


def paper_targets():
    return []
