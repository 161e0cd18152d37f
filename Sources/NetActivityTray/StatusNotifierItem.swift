// The tray indicator (issue 4) lives here.
