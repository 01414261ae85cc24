import MicLoopCLI

runMicLoop()
