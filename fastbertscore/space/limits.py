"""Every bound the Space holds a request to, in one place: the handlers check them, the page's labels and
docs/space.md show them, and a request over one is refused with a sentence naming it, before any model work."""

from __future__ import annotations

#: Rows of a Batch file, and segments (references) of a comparison.
MAX_ROWS = 2000
#: Characters of one text (a candidate, a reference, a system's output).
MAX_CHARS = 4000
#: Systems of one comparison (uploaded and pasted together).
MAX_SYSTEMS = 8
#: Megabytes of the embedding cache of the loaded model: the Pair tab embeds its texts to score them and again
#: inside its explanation, and the second time is free.
CACHE_MB = 16
#: Seconds a result file is kept, so that a long-running Space does not fill its disk.
KEEP_RESULTS_S = 3600
