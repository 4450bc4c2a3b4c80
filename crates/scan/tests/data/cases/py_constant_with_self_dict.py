# expect: none
import os
CMD = "ls -la"
class Config:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)
os.system(CMD)
