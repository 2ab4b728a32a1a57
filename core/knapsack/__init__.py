"""Knapsack-family problems solved by exact dynamic programming on the CPU and the GPU."""
