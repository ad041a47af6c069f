"""Running scenarios end to end: plan the runs, simulate each, judge it, write it as it finishes."""
