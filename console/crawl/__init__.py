"""The crawl loop: scope, fetch, robots.txt, parse, pipeline, and the RQ jobs that tie them."""
