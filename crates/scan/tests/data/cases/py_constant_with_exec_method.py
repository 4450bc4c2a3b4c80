# expect: none
import os
CMD = "ls -la"
def query(cursor):
    return cursor.exec("SELECT 1")
os.system(CMD)
