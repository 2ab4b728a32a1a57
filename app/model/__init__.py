"""What the window shows, without Qt: the extraction tool, its pieces and events, the open image,
view and tile arithmetic, lengths, and the knapsack panel's state.  Unit-tested without a window.
"""
