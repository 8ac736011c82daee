"""perfcast: performance measurements in, models a performance engineer can trust out."""

__version__ = "0.1.0"
