# expect: exec_template_literal_with_input
import os
import sys
CMD = "ls"
os.system(f"{CMD:{sys.argv[1]}}")
