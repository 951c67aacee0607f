"""The audio front end: noise suppression, gain, VAD, wake word, utterance recorder."""
