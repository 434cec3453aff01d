"""Built-in data: the hardware catalog."""
