"""The knapsack tab: the panel, its widgets, and the solves it runs in a worker process."""
