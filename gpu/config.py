"""Launch configuration of every LineSnap kernel, in one place.

The host wrappers read these names at launch time (never at import), so tests
can patch them small under ``NUMBA_ENABLE_CUDASIM=1`` and make launches span
several blocks and a partial last block.  How the defaults were chosen (H100
measurements): docs/notes/gpu.md.
"""

#: Threads per block of one-dimensional elementwise and grid-stride kernels.
THREADS_PER_BLOCK = 256

#: Most threads per block of a reduction kernel (the shared arrays of kernels_dp.group_max_argmax).
MAX_REDUCE_THREADS = 1024

#: Threads reducing one pair state (q, r) of ``mitm`` over p; MITM_BLOCK_THREADS is Seredin's one block per state.
MITM_THREADS_PER_STATE = 8

#: Threads per block of the ``mitm`` stage kernel: ``MITM_BLOCK_THREADS // threads_per_state`` states a block.
MITM_BLOCK_THREADS = 128

#: Threads per block of the ``window`` stage kernel (one block per column q).
WINDOW_THREADS = 256

#: log2 of the range-maximum block width of ``window``; at most 5 (one 32-bit mask per position).
RMQ_BLOCK_BITS = 5

#: Threads per block of the final max + argmax over the merge states.
MERGE_THREADS = 256

#: Blocks of the first, grid-stride pass of the final max + argmax.
MERGE_BLOCKS = 256

# --- Knapsack kernels (gpu/knapsack) ---------------------------------------------------

#: Threads per block of the knapsack row kernels; a multiple of 32 (one tile of cells).
KNAPSACK_THREADS_PER_BLOCK = 256

#: KP1/KP2 with at most this many usable items (<= 22) run the meet in the middle, not the DP; 0: never.
KNAPSACK_MITM_MAX_ITEMS = 22

#: Cells of a window row per thread and tile of the row kernels (a compile-time constant).
KNAPSACK_CELLS_PER_THREAD = 4

#: Largest grid of the row kernels (0: 16 blocks per multiprocessor); blocks loop over tiles.
KNAPSACK_MAX_BLOCKS = 0

#: Items per launch of the row method, 1 to 3 (1: Lemos et al.'s one launch per item).
KNAPSACK_ITEMS_PER_STEP = 2

#: Share of the free device memory one knapsack solve may use by default.
KNAPSACK_DEVICE_MEMORY_SHARE = 0.7

#: Keep the large DP buffers in the device workspace between solves (gpu.knapsack.release_memory frees them).
KNAPSACK_KEEP_WORKSPACE = True

#: KP1 and MCKP: try the host's reductions and first states (core.knapsack.kp1.solve_kp1_quick,
#: core.knapsack.mckp.solve_mckp_quick) before the GPU's DP;
#: they settle most instances in milliseconds (the kernel tests and benchmarks turn it off).
KNAPSACK_HOST_FIRST = True

#: KP1 with at least this many usable items runs the persistent wavefront kernel when it fits.
KNAPSACK_WAVEFRONT_MIN_ITEMS = 256

#: Threads per block of the wavefront kernel, a multiple of 32.
KNAPSACK_WAVEFRONT_THREADS = 512

#: Most items a wavefront block runs between two exchanges with its neighbours.
KNAPSACK_WAVEFRONT_BATCH = 16

#: Blocks of the wavefront kernel (0: one per multiprocessor); all must be resident at once.
KNAPSACK_WAVEFRONT_BLOCKS = 0

#: Shared memory of one wavefront block in bytes, static and dynamic (48 KiB needs no opt-in).
KNAPSACK_WAVEFRONT_SHARED_BYTES = 48 * 1024

#: Rows of the wavefront's ring of published rows (0: 4 batches + 1).
KNAPSACK_WAVEFRONT_RING_ROWS = 0

#: Threads of the speculative backtracking block, a power of two: log2 of it items per round trip (<= 10).
KNAPSACK_BACKTRACK_THREADS = 256

#: Launches between two waits for the device to check the knapsack time limit (only while one is set).
KNAPSACK_POLL_LAUNCHES = 64

#: Subset sum: "bitset" (64 capacities a word, g vector for recovery) or "gvector" (the g vector alone).
SUBSET_SUM_METHOD = "bitset"

#: Threads per block of the subset-sum kernels.
SUBSET_SUM_THREADS = 256

#: Items launched between two reads of the "capacity reached" flag (one launch per item).
SUBSET_SUM_POLL_ITEMS = 64

#: Run every item in one persistent launch with grid barriers (else one launch per item).
SUBSET_SUM_PERSISTENT = True

#: Blocks per multiprocessor of the persistent subset-sum kernel, capped by residency (0: the cap).
SUBSET_SUM_BLOCKS_PER_SM = 0

#: Threads per block of the MCKP class kernel.
MCKP_THREADS = 128

#: Consecutive-capacity cells of one MCKP thread (strided by the block width).
MCKP_CELLS_PER_THREAD = 8

#: Items of a class staged in shared memory at a time.
MCKP_ITEM_CHUNK = 256

#: Shared memory for the staged previous row of one MCKP block, bytes.
MCKP_ROW_SHARED_BYTES = 44 * 1024

#: Drop items of an MCKP class that another item dominates (no heavier, no less profitable).
MCKP_PRUNE_DOMINATED = True
