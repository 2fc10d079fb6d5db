"""The app shell, the shared controls and the plot widget every dpexplore app is built from."""
