"""The calibration report: one module per section topic (its figures as JSON), `build` putting them
together, `display` and `tables/` turning them into the tables of the Markdown, HTML and dashboard
views, `formats` writing the files, and `cache` and `jobs` computing it ahead of a request."""
