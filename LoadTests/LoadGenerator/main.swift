print("spotter-load: under construction")
