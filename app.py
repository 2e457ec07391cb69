"""Gradio Space for fastbertscore: score a pair (with a heatmap and what the candidate missed), a file, or systems.

The page, its handlers and its limits live in ``fastbertscore.space``. Run: ``python app.py``
(GRADIO_SERVER_NAME / GRADIO_SERVER_PORT choose where it listens).
"""

import fastbertscore as fb

demo = fb.space.build_demo()

if __name__ == "__main__":
    fb.space.launch(demo)
