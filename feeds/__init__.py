"""RSS/Atom feeds and sitemaps: transforms of papers and results into XML."""
