# expect: exec_dynamic_string
import sys
MOD = "os" if sys.platform != "win32" else "nt"
__import__(MOD).system(sys.argv[1])
