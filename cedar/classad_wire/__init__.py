"""cedar.classad_wire"""
