"""How often the transcript draws, takes in text and measures, and how the model's
stream is taken to match: numbers behind figures 3, 4 and 10 (benchmarks/README.md)."""

FRAME_S = 1 / 30
# Streamed text is drawn at most this often: at a model's pace a frame is a few dozen
# characters either way, and each frame of the transcript (its markdown, measure, the
# compositor and the terminal write) was most of what streaming cost (figure 10).
STREAM_FRAME_S = 1 / 20
# The model's stream is taken in batches at least this far apart (`providers/body.py`),
# and a batch is drawn as it comes (a streaming frame after the last frame at the
# earliest): one batch a frame, ten frames a second. Each batch is one trip through the
# provider, the loop and every subscriber; batches half a frame apart made two trips a
# frame, and batches a frame apart drawn a frame later made frames every other frame
# anyway (the batch after a frame came just before the next one was drawn).
NETWORK_GATHER_S = 1 / 10
# Between two steps of measuring blocks off screen (see `BlockLines.measure`): each step
# takes a few milliseconds, and input waiting behind one is handled in this pause. A
# whole frame between steps left the CPU idle two thirds of the time, so a resumed
# session of 20,000 messages took a minute and a half to be measured.
REFLOW_PAUSE_S = 0.002
# Drawing time an answer's new markdown may take per frame (see AnswerBlock.flush).
ANSWER_BUDGET_S = 0.004
