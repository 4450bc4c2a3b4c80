# expect: none
import os
from dataclasses import dataclass
@dataclass
class Request:
    label: str
kind = "uptime"
def handle(request):
    match request:
        case Request(kind="status"):
            return 1
os.system(kind)
