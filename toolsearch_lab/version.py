"""The package's version, in one place: the front door re-exports it and the build reads it from here."""

__version__ = "0.1.0"
