"""``pocket-satellite doctor``: checks of the config, devices, models, broker and machine."""
