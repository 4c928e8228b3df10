"""The version of ragscore (a leaf: every module that writes it imports it from here)."""

__version__ = "0.1.0"
