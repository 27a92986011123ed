"""Small helpers every app may import; this package imports no app."""
