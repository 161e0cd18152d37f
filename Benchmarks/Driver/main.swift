// netactivity-bench: the benchmark driver (issue 5) lives here.
print("netactivity-bench: not written yet")
