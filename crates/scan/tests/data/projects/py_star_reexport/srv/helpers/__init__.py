from .math import *
