"""The label planner: how many more human labels a campaign needs (`labels`), with the alt-test's
items per annotator (`alttest`) and uniform against active sampling (`designs`)."""
