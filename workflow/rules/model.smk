def model_targets():
    return []
