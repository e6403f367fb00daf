import Histogram
import ArgumentParser
print("x")
