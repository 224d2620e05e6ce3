#!/usr/bin/env python3
"""Print the text of a PDF file, page by page."""
import sys

if __name__ == "__main__":
    print("extracting", sys.argv[1])
