"""The package version, in a module of its own so that the transport (its User-Agent) and the package
root both import it without importing each other."""

__version__ = "0.1.0"
